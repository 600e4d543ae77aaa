#!/usr/bin/env node
// The installed `rxagent` command: the CLI built into dist/. Why a file of its own: npm checks
// the bin path before `prepack` builds dist/, and drops a bin it cannot find (`npm publish` from a
// fresh clone would ship without the command).
import "../dist/cli/main.js";
