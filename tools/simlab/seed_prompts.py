"""The prompts the seed report's tool actually sent, as the simulator counts them.

The seed report calls its workload "128/128", but its tool (CordatusAI/llm-benchmark) sends
the 100 lines of its `prompts.txt`, each ending "Your answer must contain at least 128
tokens.", with `max_tokens=128`: 128 is the output, not the prompt. The lines are 214-663
characters long, 297 on average, so by the simulator's rule (``count_tokens``: ceil(chars /
4)) they are 54-166 prompt tokens, 75 on average. A real engine adds its chat template's
tokens to these; the simulator counts message text only, so these are the lengths a profile
served by `servecap sim` would see from the seed's tool.

The tool shuffles the list once (unseeded) and sends ``prompts[:10c]`` of it, cycled, at
level ``c``: the k-th request of every level is the k-th prompt of that one order. Which
order the seed ran is unknown, so ``seed_prompt_tokens`` takes an order seed.
"""

from __future__ import annotations

import numpy as np

from servecap.sim.server.openai import count_tokens

#: characters of each line of the seed tool's prompts.txt (stripped, as the tool reads them)
SEED_PROMPT_CHARS: tuple[int, ...] = (
    663, 564, 526, 502, 481, 482, 468, 464, 445, 442, 412, 411, 409, 383, 380, 390, 366, 359,
    365, 369, 361, 325, 336, 318, 323, 316, 282, 309, 290, 296, 301, 306, 282, 297, 276, 289,
    299, 298, 301, 285, 269, 268, 273, 255, 263, 268, 284, 248, 278, 258, 261, 264, 228, 244,
    274, 254, 254, 238, 247, 244, 236, 255, 243, 241, 226, 242, 234, 251, 228, 227, 248, 243,
    214, 240, 254, 227, 252, 258, 236, 245, 258, 224, 225, 257, 217, 249, 227, 253, 237, 219,
    247, 233, 232, 229, 230, 231, 232, 239, 247, 243,
)  # fmt: skip


def seed_prompt_tokens(order: int = 0) -> tuple[int, ...]:
    """The seed's 100 prompt lengths in tokens, in one seeded shuffled order (``order``):
    the k-th request of a level is sent the k-th of them, cycled."""
    tokens = np.array([count_tokens(c) for c in SEED_PROMPT_CHARS])
    return tuple(int(t) for t in np.random.default_rng([order, 20]).permutation(tokens))


__all__ = ["SEED_PROMPT_CHARS", "seed_prompt_tokens"]
