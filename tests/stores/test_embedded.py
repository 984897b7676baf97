"""The embedded store: PodCliqueSets read once from manifest files and directories."""

from __future__ import annotations

import asyncio
from pathlib import Path

import orjson
import pytest
import yaml

from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.podcliqueset import read_podcliqueset
from webhook.stores import EmbeddedStore, StoreError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "objects"


def pcs(name: str, namespace: str | None = None, replicas: int = 1) -> dict[str, object]:
    metadata: dict[str, object] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {"apiVersion": "grove.io/v1alpha1", "kind": "PodCliqueSet", "metadata": metadata, "spec": {"replicas": replicas}}


RCT = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t"}, "spec": {"spec": {}}}


def started(*paths: Path) -> EmbeddedStore:
    store = EmbeddedStore(list(paths))
    asyncio.run(store.start())
    return store


def test_the_example_workload_is_one_podcliqueset_in_default() -> None:
    store = started(EXAMPLES)
    assert store.ready
    assert store.size == 1
    found = store.get("default", "rs-test")
    assert found is not None
    assert [e.name for e in (found.spec.template.resource_sharing or [])] == ["int-tpl5", "ext-tpl", "int-tpl", "int-tpl7"]
    assert store.get("default", "ext-tpl") is None
    assert store.get("other", "rs-test") is None


def test_multi_document_yaml_lists_json_and_directories(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(yaml.safe_dump_all([RCT, pcs("one"), None, pcs("two", "team-a")]))
    (tmp_path / "b.json").write_bytes(orjson.dumps({"apiVersion": "v1", "kind": "List", "items": [pcs("three", "team-b"), RCT]}))
    (tmp_path / "c.yml").write_text(yaml.safe_dump({"apiVersion": "grove.io/v1alpha1", "kind": "PodCliqueSetList",
                                                     "items": [pcs("four")]}))
    (tmp_path / "README.md").write_text("not a manifest: {")
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "d.yaml").write_text(yaml.safe_dump(pcs("not-read")))
    single = tmp_path / "single.manifest"
    single.write_text(yaml.safe_dump(pcs("five", "team-c")))

    store = started(tmp_path, single)

    assert sorted(k for k in store._objects) == [
        ("default", "four"), ("default", "one"), ("team-a", "two"), ("team-b", "three"), ("team-c", "five"),
    ]
    assert store.get("default", "one").namespace == "default"  # type: ignore[union-attr]


def test_nothing_is_loaded_before_start(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(yaml.safe_dump(pcs("one")))
    store = EmbeddedStore([tmp_path])
    assert (store.ready, store.size, store.get("default", "one")) == (False, 0, None)


def test_fetch_finds_nothing_more() -> None:
    store = started(EXAMPLES)
    assert asyncio.run(store.fetch("default", "absent")) is None


def test_a_store_of_given_objects() -> None:
    store = EmbeddedStore.of([read_podcliqueset(pcs("x", "ns"))])
    assert store.ready and store.size == 1 and store.get("ns", "x") is not None


ERRORS = [
    (
        "YAML syntax in the second document",
        "bad.yaml",
        "kind: ResourceClaimTemplate\n---\nkind: PodCliqueSet\nmetadata: {name: [x\n",
        "{path}: document 2: not valid YAML: ",
    ),
    ("JSON syntax", "bad.json", '{"kind": "PodCliqueSet",', "{path}: not valid JSON: "),
    (
        "a field of the wrong type",
        "bad.yaml",
        yaml.safe_dump_all([RCT, {**pcs("p"), "spec": {"replicas": "two"}}]),
        "{path}: document 2: PodCliqueSet cannot be read: spec.replicas: Input should be a valid integer",
    ),
    (
        "a label that is not a string",
        "bad.yaml",
        "apiVersion: grove.io/v1alpha1\nkind: PodCliqueSet\nmetadata:\n  name: p\n  labels: {enabled: true}\n",
        "{path}: document 1: PodCliqueSet cannot be read: metadata.labels.enabled: Input should be a valid string",
    ),
    ("a document that is not an object", "bad.yaml", "- a\n- b\n", "{path}: document 1: expected a Kubernetes object (a mapping), found list"),
    (
        "a PodCliqueSet without a name",
        "bad.yaml",
        "apiVersion: grove.io/v1alpha1\nkind: PodCliqueSet\nspec: {replicas: 1}\n",
        "{path}: document 1: PodCliqueSet has no metadata.name",
    ),
    (
        "the same PodCliqueSet twice",
        "bad.yaml",
        yaml.safe_dump_all([pcs("p"), pcs("p", "default")]),
        "{path}: document 2: PodCliqueSet default/p is already defined in {path}: document 1",
    ),
]


@pytest.mark.parametrize(("file", "text", "message"), [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_an_unusable_manifest_is_one_line_naming_file_and_document(tmp_path: Path, file: str, text: str, message: str) -> None:
    path = tmp_path / file
    path.write_text(text)
    with pytest.raises(StoreError) as raised:
        started(tmp_path)
    assert str(raised.value).startswith(message.format(path=path))
    assert "\n" not in str(raised.value)


def test_a_missing_path_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"absent\.yaml: no such file or directory$"):
        started(tmp_path / "absent.yaml")
