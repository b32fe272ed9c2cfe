// The harness and `docgen dev` pick free ports the same way.
export { freePort } from '../../src/dev/free-port.ts';
