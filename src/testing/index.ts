/** `rxagent/testing`: a scripted model, model cassettes and checks for marble tests of agent runs. */
// TypeBox's compiler loaded now: marble tests on virtual time need every validation to answer
// synchronously, which the core's on-first-use loading gives only once it has arrived.
import "../tools/load-typebox-compiler.js";
export { scriptedModel } from "./scripted-model.js";
export type { ScriptedBlock, ScriptedModel, ScriptedModelOptions, ScriptedReply, ScriptedTurn } from "./scripted-model.js";
export { assertEventGrammar, checkEventGrammar } from "./event-grammar.js";
export type { EventGrammarOptions } from "./event-grammar.js";

// Cassettes: record a real run once, replay it in virtual time (docs/cassettes.md)
export { recordingModel } from "./recording-model.js";
export type { RecordingModel, RecordingModelOptions } from "./recording-model.js";
export { cassetteModel } from "./cassette-model.js";
export type { CassetteModel, CassetteModelOptions } from "./cassette-model.js";
export { cassetteOfRecords, parseCassette, recordsOfCassette } from "./cassette.js";
export type {
  Cassette,
  CassetteCall,
  CassetteEvent,
  CassetteMessage,
  CassetteModelIdentity,
  CassetteRecord,
  CassetteRequest,
  CassetteSink,
  EventFields,
} from "./cassette.js";
export type { FieldChanges, MessageChanges } from "./message-changes.js";

// Marble tests of one's own agent
export { configureMarbles } from "./marbles.js";
export type { MarbleHelpers } from "./marbles.js";
