/** The library surface: the engine, the normalizing decorator, the config schema. */
export * from "./normalize/index.js";
export { NormalizingTransport, type NormalizationOptions } from "./proxy/withNormalization.js";
export { withNormalization } from "./proxy/inProcess.js";
export { Bridge, type BridgeOptions } from "./proxy/bridge.js";
export { createStderrLogger, silentLogger, type Logger, type LogLevel } from "./observe/logger.js";
export type { FitOptions } from "./proxy/fitStage.js";
export type { FitPolicyInput } from "./fit/fitPolicy.js";
export type { FitLimits } from "./fit/settings.js";
export { DEFAULT_LIMITS, DEFAULT_IMAGES, DEFAULT_NORMALIZE, DEFAULT_FIT } from "./config/defaults.js";
export { completePolicyOptions } from "./config/policy.js";
export { ConfigSchema, configJsonSchema, type ProxyConfig, type ServerConfig } from "./config/schema.js";
export { loadConfigFile, parseConfig } from "./config/load.js";
export { NormalizerError, type ErrorCode } from "./errors/NormalizerError.js";
export { JSONRPC } from "./errors/jsonRpcCodes.js";
export type { ProxyTransport, ProxySendOptions, FramingProblem } from "./transports/types.js";
