import pytest

from servecap.core.errors import UserInputError
from servecap.workload.lengths import parse_length_spec
from servecap.workload.sources import SyntheticSource
from servecap.workload.text import SharedPrefixes, pool, request_text
from servecap.workload.tokenize import load_tokenizer

tokenizers = pytest.importorskip("tokenizers")


@pytest.fixture(scope="module")
def tokenizer_path(tmp_path_factory):
    """A tiny BPE tokenizer trained here on the pool's text, saved as tokenizer.json."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["[UNK]", "<s>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator([pool()[i : i + 2000] for i in range(0, 200_000, 2000)], trainer)
    path = tmp_path_factory.mktemp("tok") / "tokenizer.json"
    tok.save(str(path))
    return path


@pytest.mark.parametrize("tokens", [1, 2, 17, 128, 1000, 4096])
def test_fit_gives_exactly_n_tokens(tokenizer_path, tokens):
    exact = load_tokenizer(tokenizer_path)
    text = exact.fit(request_text(3, tokens), tokens)
    assert exact.count(text) == tokens
    # a byte-level BPE of 400 pieces needs under 4 characters a token, so the cut is a
    # prefix of the 4-characters-a-token text, never padded
    assert request_text(3, tokens).startswith(text)


def test_synthetic_source_with_tokenizer_and_prefix(tokenizer_path):
    exact = load_tokenizer(tokenizer_path)
    source = SyntheticSource(
        parse_length_spec("uniform:10:300"),
        parse_length_spec("8", "output"),
        prefixes=SharedPrefixes(64, groups=2),
        tokenizer=exact,
    )
    for i in range(5):
        r = source.request(i)
        system, user = r.messages
        assert exact.count(system.content) == 64
        assert exact.count(user.content) == r.input_tokens - 64


def test_fit_pads_a_short_text_and_keeps_its_start(tokenizer_path):
    exact = load_tokenizer(tokenizer_path.parent)  # a directory holding tokenizer.json
    text = exact.fit("Hello there", 300)
    assert text.startswith("Hello there") and exact.count(text) == 300


def test_bad_tokenizer_file(tmp_path):
    bad = tmp_path / "tokenizer.json"
    bad.write_text("{}")
    with pytest.raises(UserInputError, match=r"tokenizer .*cannot load"):
        load_tokenizer(bad)
