import { typeBoxCompiler } from "./typebox-loader.js";
import { typeBoxValidator } from "./typebox-validator.js";

// Imported for its effect by rxagent/typebox and rxagent/testing: TypeBox's compiler loaded with
// the importing module, so every TypeBox validation answers synchronously from the start.
typeBoxCompiler.use((schema) => typeBoxValidator(schema as Parameters<typeof typeBoxValidator>[0]));
