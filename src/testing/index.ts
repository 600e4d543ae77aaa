/** `rxagent/testing`: a scripted model and checks for marble tests of agent runs. */
export { scriptedModel } from "./scripted-model.js";
export type { ScriptedBlock, ScriptedModel, ScriptedModelOptions, ScriptedReply, ScriptedTurn } from "./scripted-model.js";
export { assertEventGrammar, checkEventGrammar } from "./event-grammar.js";
export type { EventGrammarOptions } from "./event-grammar.js";
export { configureMarbles } from "./marbles.js";
export type { MarbleHelpers } from "./marbles.js";
