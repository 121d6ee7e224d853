/**
 * NATS permissions per role (node, bridge, daimon, gate, chat) and the nats-server config that
 * grants them. docs/SECURITY.md is the explanation; `ensoul nats-config` prints the config.
 */
export {
  assertRole,
  DEFAULT_RESPONSE_PERMISSION,
  inboxPrefixFor,
  isRole,
  rolePermissions,
  ROLES,
  SHARED_INBOX_PREFIX,
  sharedContextGrants,
  failoverGrants,
  type ResponsePermission,
  type Role,
  type RolePermissionOptions,
  type RolePermissions,
  type SubjectPermission,
} from "./rolePermissions.ts";
export {
  accountName,
  natsServerConfig,
  passwordEnvVar,
  type EnvPassword,
  type NatsServerConfigOptions,
  type NatsUserSpec,
} from "./natsServerConfig.ts";
