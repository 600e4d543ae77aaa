// Every test file starts with TypeBox's compiler loaded, as `rxagent/testing` gives users: the
// marble tests need TypeBox validations to answer synchronously. The loading on first use is
// tested in fresh processes (test/tools/typebox-loader.test.ts).
import "../../src/tools/load-typebox-compiler.js";
