// An agent built with the JavaScript A2A SDK (@a2a-js/sdk 1.x, express), run from the stack's npm install.
//
//     node agent.mjs --port 41241 [--compat]
//
// The card (1.0 shape) declares JSON-RPC at /a2a/jsonrpc and HTTP+JSON at /a2a/rest, streaming
// but no push. With --compat the SDK's v0.3 layer is on: the card also declares both bindings at
// 0.3, the card endpoint answers by A2A-Version (`Vary: A2A-Version`; no header means 0.3), and the
// same URLs take 0.3 calls. "question" answers with a Message; "garble" starts a task, then
// publishes a Message into its stream (the SDK ends the stream with an error: an agent's bug, not
// the client's); anything else streams a short log and completes. 127.0.0.1 only.

import express from 'express';
import { A2A_PROTOCOL_VERSION, AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import { duplicateInterfacesForLegacy } from '@a2a-js/sdk/compat/v0_3';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, restHandler, UserBuilder } from '@a2a-js/sdk/server/express';

const argument = (name) => {
  const at = process.argv.indexOf(name);
  return at === -1 ? undefined : process.argv[at + 1];
};
const port = Number(argument('--port'));
const compat = process.argv.includes('--compat');
const base = `http://127.0.0.1:${port}`;

const text = (value) => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

class ScriptedExecutor {
  cancelTask = async () => {};

  async execute(context, bus) {
    const { taskId, contextId, userMessage, task } = context;
    const said = userMessage.parts.map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join(' ');
    if (said.includes('question') && !task) {
      bus.publish(AgentEvent.message({ messageId: crypto.randomUUID(), role: Role.ROLE_AGENT, parts: [text('I review diffs.')],
                                       contextId, taskId: '', metadata: {}, extensions: [], referenceTaskIds: [] }));
      bus.finished();
      return;
    }
    const status = (state) => ({ state, timestamp: new Date().toISOString(), message: undefined });
    bus.publish(AgentEvent.task(task ?? { id: taskId, contextId, status: status(TaskState.TASK_STATE_SUBMITTED),
                                          artifacts: [], history: [userMessage], metadata: {} }));
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_WORKING), metadata: {} }));
    if (said.includes('garble')) {
      bus.publish(AgentEvent.message({ messageId: crypto.randomUUID(), role: Role.ROLE_AGENT, parts: [text('oops')],
                                       contextId, taskId, metadata: {}, extensions: [], referenceTaskIds: [] }));
      bus.finished();
      return;
    }
    for (let index = 0; index < 3; index++) {
      await sleep(20);
      bus.publish(AgentEvent.artifactUpdate({ taskId, contextId, append: index > 0, lastChunk: index === 2, metadata: undefined,
                                              artifact: { artifactId: 'log', name: 'log.txt', description: '',
                                                          parts: [text(`line ${index}\n`)], metadata: undefined, extensions: [] } }));
    }
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: status(TaskState.TASK_STATE_COMPLETED), metadata: {} }));
    bus.finished();
  }
}

const interfaces = [
  { url: `${base}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION },
  { url: `${base}/a2a/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: A2A_PROTOCOL_VERSION },
];
const card = {
  name: compat ? 'js-compat' : 'js',
  description: 'an @a2a-js/sdk agent for a2a-capture\'s tests',
  supportedInterfaces: compat ? duplicateInterfacesForLegacy(interfaces, ['JSONRPC', 'HTTP+JSON']) : interfaces,
  version: '1.0.0',
  capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'run', name: 'Run', description: 'Runs the job it is given.', tags: ['test'], examples: [],
             inputModes: [], outputModes: [], securityRequirements: [] }],
  documentationUrl: '',
  signatures: [],
};

const requestHandler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new ScriptedExecutor());
const legacyCompat = compat ? { enabled: true } : undefined;
const app = express();
app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler, legacyCompat }));
app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication, legacyCompat }));
app.use('/a2a/rest', restHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication, legacyCompat }));
app.listen(port, '127.0.0.1', (error) => {
  if (error) {
    throw error;
  }
});
