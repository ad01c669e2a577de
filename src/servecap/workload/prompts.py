"""A built-in set of varied prompts, each close to a requested input length.

Prompts are built from 12 subjects x 10 tasks (120 distinct requests) and padded with
seeded, readable context sentences to about `CHARS_PER_TOKEN` characters per requested
token, the usual ratio of English prose for BPE tokenizers (and the simulator's counting
rule). The real prompt tokens come back in the server's usage and are reported per level.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

CHARS_PER_TOKEN = 4

SUBJECTS: tuple[str, ...] = (
    "a city's public transport network",
    "the water cycle",
    "a small bakery's finances",
    "the history of the printing press",
    "how vaccines train the immune system",
    "a distributed key-value store",
    "the rules of chess openings",
    "coral reef ecosystems",
    "renewable energy on islands",
    "a medieval trade route",
    "the design of a compiler",
    "sleep and memory",
)

TASKS: tuple[str, ...] = (
    "Explain {s} to a curious twelve-year-old.",
    "Write a short, structured summary of {s}.",
    "List the three most important open questions about {s}.",
    "Describe a common misconception about {s} and correct it.",
    "Compare two different approaches to {s} and weigh them.",
    "Draft an outline for a lecture about {s}.",
    "Write a haiku sequence inspired by {s}.",
    "Give a step-by-step plan to learn about {s} in one month.",
    "Summarise the risks and benefits related to {s}.",
    "Write a dialogue between two experts disagreeing about {s}.",
)

_WORDS: tuple[str, ...] = tuple(
    (
        "system data model river market energy network city school signal power value history "
        "design student change process result method season island bridge garden engine library "
        "window planet journey record theory practice balance pattern measure harvest forest "
        "letter number question answer reason evidence morning evening summer winter careful "
        "quiet simple clear steady early later important common useful strong gentle bright rapid "
        "modern ancient local global"
    ).split()
)


@dataclass(frozen=True, slots=True)
class Prompt:
    """One prompt: its text and the number of tokens it was built to hold."""

    text: str
    target_tokens: int


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(6, 12))]
    return " ".join(words).capitalize() + "."


def _fit(head: str, target_chars: int, rng: random.Random) -> str:
    """`head` followed by context sentences, cut on a word boundary near `target_chars`."""
    if len(head) >= target_chars:
        return head[:target_chars].rsplit(" ", 1)[0] or head[:target_chars]
    parts = [head, "Context:"]
    length = len(head) + 9
    while length < target_chars:
        sentence = _sentence(rng)
        parts.append(sentence)
        length += len(sentence) + 1
    text = " ".join(parts)
    cut = text[:target_chars]
    return cut if len(text) == target_chars else cut.rsplit(" ", 1)[0]


def build_prompts(input_tokens: int, seed: int = 0) -> list[Prompt]:
    """All 120 built-in prompts at `input_tokens` each, in a seeded shuffled order."""
    rng = random.Random(seed)
    target_chars = max(1, input_tokens * CHARS_PER_TOKEN)
    prompts = [
        Prompt(_fit(task.format(s=subject), target_chars, rng), input_tokens)
        for subject in SUBJECTS
        for task in TASKS
    ]
    rng.shuffle(prompts)
    return prompts
