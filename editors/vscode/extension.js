// extension.js - the llmp extension: runs `llmp lsp` over stdio for .llmp files through
// vscode-languageclient.  The setting llmp.path names the executable; changing it restarts
// the server, as does the command "llmp: Restart the language server".
'use strict';
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

async function start() {
  const command = vscode.workspace.getConfiguration('llmp').get('path') || 'llmp';
  const server = { command, args: ['lsp'] };
  client = new LanguageClient('llmp', 'llmp language server', server, {
    documentSelector: [{ scheme: 'file', language: 'llmp' }, { scheme: 'untitled', language: 'llmp' }],
  });
  try {
    await client.start();
  } catch (err) {
    client = undefined;
    vscode.window.showErrorMessage(
      `llmp: cannot start \`${command} lsp\` (${err && err.message ? err.message : err}); ` +
        'set llmp.path to the llmp executable.');
  }
}

async function stop() {
  const c = client;
  client = undefined;
  if (c) await c.stop();
}

async function restart() {
  await stop();
  await start();
}

function activate(context) {
  context.subscriptions.push(
    vscode.commands.registerCommand('llmp.restartServer', restart),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('llmp.path')) restart();
    }),
    { dispose: stop });
  return start();
}

function deactivate() {
  return stop();
}

module.exports = { activate, deactivate };
