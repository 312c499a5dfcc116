"""What the session keeps for each task is a compact record (issue 36: under 150 MB at 200,000 tasks): the
bytes one more task costs, measured over N and 4N distinct tasks, stay within a few times the two strings
it must keep (its id, its message's id), however many tasks came before."""

from __future__ import annotations

import sys

from tests.test_session_state import _send, kept_by_session

N = 2_000


def _kept(exchanges) -> int:
    """The bytes a session of these exchanges keeps, once every one is learned."""
    kept, session = kept_by_session(exchanges)
    assert len(session.tasks) == len(exchanges)
    return kept


def test_one_more_task_costs_a_compact_record_beside_the_ids_it_must_keep():
    exchanges = [_send(number) for number in range(1, 4 * N + 1)]
    small, large = _kept(exchanges[:N]), _kept(exchanges)
    per_task = (large - small) / (3 * N)  # what each task past the first N added: its share of the session
    last = exchanges[-1].response.body
    task_id = last.split(b'"id": "', 1)[1].split(b'"', 1)[0].decode()
    must_keep = sys.getsizeof(task_id) + sys.getsizeof(f"m-{4 * N}")  # the dict keys a later rule looks up
    # 3.3 of them with named tuples and a label string in every record; 2.7 with slotted frozen records
    assert per_task / must_keep < 3.0, (per_task, must_keep)
