export * from "./common/result";
