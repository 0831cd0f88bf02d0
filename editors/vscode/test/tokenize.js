// tokenize.js - tokenizes texts with the grammar as VS Code does (vscode-textmate, Oniguruma),
// for tests/editors/grammar_check.py: reads {name: text}, writes {name: [[[start, end,
// [scopes]], ...] per line]}.
// usage: node tokenize.js GRAMMAR.json INPUTS.json OUT.json
'use strict';
const fs = require('fs');
const path = require('path');
const oniguruma = require('vscode-oniguruma');
const vsctm = require('vscode-textmate');

async function main() {
  const [grammarPath, inPath, outPath] = process.argv.slice(2);
  if (!outPath) throw new Error('usage: node tokenize.js GRAMMAR.json INPUTS.json OUT.json');
  const wasm = fs.readFileSync(path.join(path.dirname(require.resolve('vscode-oniguruma')), 'onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (sources) => new oniguruma.OnigScanner(sources),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async () => vsctm.parseRawGrammar(fs.readFileSync(grammarPath, 'utf8'), grammarPath),
  });
  const grammar = await registry.loadGrammar('source.llmp');
  const inputs = JSON.parse(fs.readFileSync(inPath, 'utf8'));
  const out = {};
  for (const [name, text] of Object.entries(inputs)) {
    let state = vsctm.INITIAL;
    out[name] = text.split('\n').map((line) => {
      const r = grammar.tokenizeLine(line, state);
      state = r.ruleStack;
      return r.tokens.map((t) => [t.startIndex, Math.min(t.endIndex, line.length), t.scopes]);
    });
  }
  fs.writeFileSync(outPath, JSON.stringify(out));
}

main().catch((e) => {
  console.error(`tokenize.js: ${e.message || e}`);
  process.exit(1);
});
