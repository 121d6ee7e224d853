/**
 * The debugger page (docs/DEBUGGER.md): the fleet at `#/`, a soul at `#/souls/<id>`, kept
 * live by `GET /api/events`. Plain DOM, no framework; bundled by esbuild (scripts/build.mjs,
 * ../pageAssets.ts).
 */
import { adoptTokenFromUrl, api } from "./api.ts";
import { badge, h, inBackground } from "./dom.ts";
import { ago } from "./format.ts";
import { FleetView } from "./fleetView.ts";
import { watchRoute, type Route } from "./router.ts";
import { SoulView } from "./soulView.ts";
import { connectEvents, type LinkState } from "./sse.ts";
import type { FleetEntry, FleetReply, LiveEvent } from "./types.ts";

/** How often the whole fleet is read again (nodes' states, anything an event missed). */
const RESYNC_MS = 15_000;

class App {
  private readonly fleet = new FleetView();
  private readonly cluster = h("span", { class: "cluster" });
  private readonly nodes = h("span", { class: "nodes" });
  private readonly link = h("span", { class: "link", attrs: { role: "status" } });
  private readonly banner = h("div", { class: "banner", attrs: { role: "alert" } });
  private readonly main = h("main", null);
  private soul: SoulView | null = null;
  private fleetScroll = 0;
  private wasLive = false;

  mount(into: HTMLElement): void {
    const top = h("header", { class: "top" },
      h("a", { class: "brand", attrs: { href: "#/" } }, "ensoul debugger"), this.cluster, this.nodes, this.link);
    into.replaceChildren(top, this.banner, this.main);
    this.main.appendChild(this.fleet.root);
    watchRoute((route) => this.show(route));
    inBackground(this.loadFleet());
    connectEvents({ onEvent: (e) => this.onEvent(e), onState: (s) => this.onLink(s) });
    window.setInterval(() => this.fleet.tick(), 5_000);
    window.setInterval(() => inBackground(this.loadFleet()), RESYNC_MS);
  }

  private async loadFleet(): Promise<void> {
    try {
      const reply = await api.fleet();
      this.fleet.setFleet(reply.souls ?? []);
      this.drawCluster(reply);
      this.banner.replaceChildren();
    } catch (err) {
      this.banner.replaceChildren(h("div", { class: "notice-error" }, `Cannot read the fleet: ${(err as Error).message}`));
    }
  }

  private drawCluster(reply: FleetReply): void {
    this.cluster.textContent = `cluster ${reply.cluster}`;
    this.nodes.replaceChildren(...(reply.nodes ?? []).map((n) =>
      h("span", { class: "node", title: `${n.node}: ${n.state}${n.bus ? `, bus ${n.bus}` : ""}${n.lastSeen ? `, seen ${ago(n.lastSeen)}` : ""}` },
        badge(n.state, n.state), " ", n.node)));
  }

  private show(route: Route): void {
    if (this.soul && route.view === "soul" && route.id === this.soul.id) return;
    if (this.soul) {
      this.soul.destroy();
      this.soul = null;
    }
    if (route.view === "fleet") {
      this.fleet.root.hidden = false;
      document.title = "ensoul debugger";
      window.scrollTo(0, this.fleetScroll);
      return;
    }
    if (!this.fleet.root.hidden) this.fleetScroll = window.scrollY;
    this.fleet.root.hidden = true;
    document.title = `${route.id} · ensoul debugger`;
    this.soul = new SoulView(route.id, this.fleet.entry(route.id));
    this.main.appendChild(this.soul.root);
    window.scrollTo(0, 0);
    inBackground(this.soul.load());
  }

  private onEvent(event: LiveEvent): void {
    const data = (event.data ?? {}) as { soulId?: string; soul?: FleetEntry };
    if (event.type === "fleet" && data.soul) {
      this.fleet.update(data.soul);
      if (this.soul?.id === data.soul.id) this.soul.onFleet(data.soul);
      return;
    }
    if (data.soulId !== undefined && this.soul?.id === data.soulId) this.soul.onEvent(event.type);
  }

  private onLink(state: LinkState): void {
    const text = {
      connecting: "connecting…",
      live: "live",
      retrying: state.state === "retrying" ? `reconnecting in ${Math.round(state.inMs / 1000)} s (${state.why})` : "",
      unauthorized: "live updates refused: token missing or wrong",
    }[state.state];
    this.link.textContent = text;
    this.link.className = `link link-${state.state}`;
    if (state.state === "live") {
      // After a reconnect, read again what the events of the gap would have said.
      if (this.wasLive) {
        inBackground(this.loadFleet());
        this.soul?.onEvent("resync");
      }
      this.wasLive = true;
    }
  }
}

adoptTokenFromUrl();
new App().mount(document.getElementById("app") ?? document.body);
