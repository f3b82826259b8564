/**
 * The preparation protocol's services for other parts of Concord (docs/architecture.md, "Public modules").
 */
export { listProjects } from "./projects.server";
