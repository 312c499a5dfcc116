"""An agent built with pya2a (Google's first A2A sample server, protocol 0.1), run in the stack's venv.

    python agent.py --port 41241 [--tls KEY CERT]

Its card (at /.well-known/agent.json, 0.1-shaped: url, no protocolVersion) declares streaming and
no push notifications. It speaks 0.1's method names only (tasks/send, tasks/sendSubscribe,
tasks/get, tasks/cancel, ...); any other name fails its request validation: -32600 with HTTP 400.
A task completes at once with one artifact; streamed, it goes working, artifact, completed.
With --tls it serves HTTPS, and its card's url says https. 127.0.0.1 only.
"""

from __future__ import annotations

import argparse

import uvicorn
from a2a.server import A2AServer
from a2a.server.task_manager import InMemoryTaskManager
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentSkill,
    Artifact,
    Message,
    SendTaskResponse,
    SendTaskStreamingResponse,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)

ARTIFACT = Artifact(name="log.txt", parts=[TextPart(text="line 0\n")])
DONE = Message(role="agent", parts=[TextPart(text="done")])


class ScriptedTasks(InMemoryTaskManager):
    async def on_send_task(self, request):
        await self.upsert_task(request.params)
        task = await self.update_store(request.params.id, TaskStatus(state=TaskState.COMPLETED, message=DONE),
                                       [ARTIFACT])
        return SendTaskResponse(id=request.id, result=self.append_task_history(task, None))

    async def on_send_task_subscribe(self, request):
        await self.upsert_task(request.params)
        task_id = request.params.id
        await self.update_store(task_id, TaskStatus(state=TaskState.COMPLETED, message=DONE), [ARTIFACT])

        async def events():
            for event in (TaskStatusUpdateEvent(id=task_id, status=TaskStatus(state=TaskState.WORKING)),
                          TaskArtifactUpdateEvent(id=task_id, artifact=ARTIFACT),
                          TaskStatusUpdateEvent(id=task_id, status=TaskStatus(state=TaskState.COMPLETED,
                                                                              message=DONE), final=True)):
                yield SendTaskStreamingResponse(id=request.id, result=event)
        return events()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--tls", nargs=2, metavar=("KEY", "CERT"), help="serve HTTPS with this key and certificate")
    args = parser.parse_args()
    scheme = "https" if args.tls else "http"
    card = AgentCard(name="pya2a", description="a pya2a agent for a2a-capture's tests",
                     url=f"{scheme}://127.0.0.1:{args.port}/", version="1.0.0",
                     capabilities=AgentCapabilities(streaming=True),
                     defaultInputModes=["text"], defaultOutputModes=["text"],
                     skills=[AgentSkill(id="run", name="Run", description="Runs the job it is given.")])
    server = A2AServer(host="127.0.0.1", port=args.port, agent_card=card, task_manager=ScriptedTasks())
    if args.tls:  # A2AServer.start() knows no TLS: its app, served by uvicorn as start() does, with it
        key, cert = args.tls
        uvicorn.run(server.app, host="127.0.0.1", port=args.port, ssl_keyfile=key, ssl_certfile=cert)
    else:
        server.start()


if __name__ == "__main__":
    main()
