"""An agent built with fasta2a (pydantic's A2A server), run in the stack's venv.

    python agent.py --port 41241 [--public-base URL]

fasta2a's card declares one JSON-RPC 1.0 interface at the root path and no push notifications;
the server answers 1.0 method names and, leniently, the 0.3 names its own client sends. The
worker writes a short log as an artifact and completes ("slow": for a while). 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import contextlib
import uuid
from dataclasses import dataclass

import anyio
import uvicorn
from fasta2a import FastA2A, Skill, Worker
from fasta2a.broker import InMemoryBroker
from fasta2a.storage import InMemoryStorage


@dataclass
class ScriptedWorker(Worker[list]):
    async def run_task(self, params) -> None:
        task = await self.storage.load_task(params["id"])
        text = " ".join(part.get("text", "") for part in params["message"]["parts"])
        await self.storage.update_task(task["id"], state="working")
        await self.publish_status(task["id"], task["context_id"], "working")
        await anyio.sleep(2 if "slow" in text else 0.05)
        artifact = {"artifact_id": str(uuid.uuid4()), "name": "log.txt", "parts": [{"text": "line 0\n"}]}
        await self.publish_artifact(task["id"], task["context_id"], artifact)
        reply = {"role": "agent", "parts": [{"text": "done"}], "message_id": str(uuid.uuid4())}
        await self.storage.update_task(task["id"], state="completed", new_artifacts=[artifact], new_messages=[reply])

    async def cancel_task(self, params) -> None:
        await self.storage.update_task(params["id"], state="canceled")

    def build_message_history(self, history):
        return history

    def build_artifacts(self, result):
        return []


def build(base: str, name: str) -> FastA2A:
    storage, broker = InMemoryStorage(), InMemoryBroker()
    worker = ScriptedWorker(broker=broker, storage=storage)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastA2A):
        async with app.task_manager, worker.run():
            yield

    return FastA2A(storage=storage, broker=broker, name=name, url=f"{base}/", lifespan=lifespan,
                   description="a fasta2a agent for a2a-capture's tests", default_input_modes=["text/plain"],
                   default_output_modes=["text/plain"],
                   skills=[Skill(id="run", name="Run", description="Runs the job it is given.", tags=["test"],
                                 input_modes=["text/plain"], output_modes=["text/plain"])])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--public-base", help="the URL the card advertises (default: this server)")
    parser.add_argument("--name", default="fast")
    args = parser.parse_args()
    app = build(args.public_base or f"http://127.0.0.1:{args.port}", args.name)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
