// Writes the ids that the JavaScript port of Hugging Face tokenizers
// (@lenml/tokenizers, a dependency-free extract of transformers.js) gives
// for every text of a corpus, with and without special tokens, as JSON on
// stdout. The tokenizer tests compare strata's tokenizer with this.
//
//   node reference-ids.js LENML_PACKAGE_DIR CORPUS.json NAME=TOKENIZER_DIR...
//
// LENML_PACKAGE_DIR is the unpacked npm package @lenml/tokenizers; each
// TOKENIZER_DIR holds tokenizer.json and tokenizer_config.json.
"use strict";
const fs = require("fs");
const path = require("path");

function main(argv) {
  if (argv.length < 3) {
    process.stderr.write(
      "usage: node reference-ids.js LENML_PACKAGE_DIR CORPUS.json NAME=DIR...\n");
    return 2;
  }
  const [pkgDir, corpusPath, ...vocabs] = argv;
  const { TokenizerLoader } = require(path.resolve(pkgDir, "dist", "main.js"));
  const corpus = JSON.parse(fs.readFileSync(corpusPath, "utf8"));
  const result = { source: "@lenml/tokenizers", vocabularies: {} };
  for (const spec of vocabs) {
    const eq = spec.indexOf("=");
    const name = spec.slice(0, eq);
    const dir = spec.slice(eq + 1);
    const readJson = (file) =>
      JSON.parse(fs.readFileSync(path.join(dir, file), "utf8"));
    const tokenizer = TokenizerLoader.fromPreTrained({
      tokenizerJSON: readJson("tokenizer.json"),
      tokenizerConfig: readJson("tokenizer_config.json"),
    });
    const cases = {};
    for (const { name: caseName, text } of corpus) {
      cases[caseName] = {
        plain: Array.from(tokenizer.encode(text, { add_special_tokens: false })),
        special: Array.from(tokenizer.encode(text, { add_special_tokens: true })),
      };
    }
    result.vocabularies[name] = cases;
  }
  process.stdout.write(JSON.stringify(result) + "\n");
  return 0;
}

process.exitCode = main(process.argv.slice(2));
