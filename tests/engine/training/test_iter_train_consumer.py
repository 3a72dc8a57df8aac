"""What the consumer of ``iter_train`` sees between events (issue 9, item 14).

Automatic garbage collection is the consumer's setting at every event and after the run however it ends
(the engine turns it off only while it runs itself), and the live count of unique pre-tokens never claims
more than the run finds.
"""

from __future__ import annotations

import gc
import random
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import cast

import pytest

from bpe_studio.engine import CountProgress, Finished, MergeMade, TrainConfig, TrainEvent, iter_train

ENDOFTEXT = "<|endoftext|>"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    rng = random.Random(14)
    words = ["".join(rng.choices("abcdefghij", k=rng.randint(1, 7))) for _ in range(600)]
    docs = [" ".join(rng.choices(words, k=rng.randint(5, 40))) for _ in range(400)]
    path = tmp_path / "corpus.txt"
    path.write_text(ENDOFTEXT.join(docs), encoding="utf-8")
    return path


@pytest.fixture
def gc_restored() -> Iterator[None]:
    was = gc.isenabled()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def _events(config: TrainConfig) -> Generator[TrainEvent, None, None]:
    return cast(Generator[TrainEvent, None, None], iter_train(config))  # it is a generator: close(), throw()


def _config(corpus: Path, **options: object) -> TrainConfig:
    settings: dict[str, object] = {"workers": 1, **options}
    return TrainConfig(inputs=(corpus,), vocab_size=400, special_tokens=(ENDOFTEXT,), **settings)  # type: ignore[arg-type]


@pytest.mark.usefixtures("gc_restored")
def test_collection_is_on_in_the_consumer_at_every_event(corpus: Path) -> None:
    gc.enable()
    kinds = set()
    for event in iter_train(_config(corpus)):
        assert gc.isenabled(), f"collection is off in the consumer at {type(event).__name__}"
        kinds.add(type(event))
    assert {CountProgress, MergeMade, Finished} <= kinds
    assert gc.isenabled()


@pytest.mark.usefixtures("gc_restored")
def test_a_consumer_that_turned_collection_off_keeps_it_off(corpus: Path) -> None:
    gc.disable()
    events = _events(_config(corpus))
    for event in events:
        changed = isinstance(event, MergeMade) and event.index > 5
        assert gc.isenabled() == changed
        if isinstance(event, MergeMade) and event.index == 5:
            gc.enable()  # the consumer changes its mind mid-run: that is what it sees from now on
        if isinstance(event, MergeMade) and event.index == 10:
            break
    events.close()
    assert gc.isenabled()


@pytest.mark.usefixtures("gc_restored")
@pytest.mark.parametrize("how", ["close", "error"])
def test_collection_is_back_on_when_the_consumer_stops_mid_merge(corpus: Path, how: str) -> None:
    gc.enable()
    events = _events(_config(corpus))
    for event in events:
        if isinstance(event, MergeMade) and event.index == 3:
            break
    if how == "close":
        events.close()
    else:
        with pytest.raises(KeyError):
            events.throw(KeyError("from the consumer"))
    assert gc.isenabled()


@pytest.mark.parametrize("workers", [1, 2])
def test_live_unique_count_never_exceeds_the_final_one(corpus: Path, workers: int) -> None:
    # Small chunks, so that each worker counts many and sees most of the 600 words.
    config = _config(corpus, workers=workers, chunk_size=2048)
    live: list[int] = []
    final = -1
    for event in iter_train(config):
        if isinstance(event, CountProgress):
            live.append(event.unique_pretokens)
        elif isinstance(event, Finished):
            final = event.result.stats.unique_pretokens
    assert len(live) > 5
    assert max(live) <= final, f"a live figure {max(live):,} exceeds the {final:,} unique pre-tokens found"
    assert live == sorted(live)  # it only grows
    assert live[-1] == final
