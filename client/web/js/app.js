// The page's entry point: every report's noise from the browser's CSPRNG (secureSource);
// page.js takes the source as an argument so that tests can record its draws.

import { start } from "./page.js";
import { secureSource } from "./randomness.js";

start(secureSource);
