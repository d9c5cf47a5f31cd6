// The page's entry point: run the respondent page with the browser's CSPRNG
// (crypto.getRandomValues, randomness.js secureSource) as the source of every report's noise.
// page.js takes the source as an argument so that tests can run the very same page with a
// recording source and check when, and how often, it draws.

import { start } from "./page.js";
import { secureSource } from "./randomness.js";

start(secureSource);
