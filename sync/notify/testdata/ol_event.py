"""Builds a deltasync change event with openlineage-python's generated
classes and prints it as its Serde serialises it.

Input (stdin, JSON): the event's parts as deltasync has them (time, type,
run id, job, dataset names, the Delta schema, the catalog, version, change
rows). The Go test (TestOpenLineageMatchesPythonClient) compares this
output, field for field, with deltasync's own encoding of the same event.
"""
import json
import sys

import attr
from openlineage.client.event_v2 import Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    DatasetFacet,
    catalog_dataset,
    dataset_version_dataset,
    schema_dataset,
    symlinks_dataset,
)
from openlineage.client.serde import Serde


@attr.define
class DeltasyncChangesDatasetFacet(DatasetFacet):
    """deltasync's custom facet: its key is prefixed (deltasync_) and its
    _schemaURL names its own JSON Schema, as the spec asks of custom facets."""

    event: str
    eventId: str
    instance: str
    changes: list
    reason: str | None = attr.field(default=None)
    logVersion: int | None = attr.field(default=None)

    @staticmethod
    def _get_schema() -> str:
        return CHANGES_URL


def field(name, t):
    if isinstance(t, str):
        return schema_dataset.SchemaDatasetFacetFields(name=name, type=t)
    kind = t["type"]
    if kind == "struct":
        return schema_dataset.SchemaDatasetFacetFields(
            name=name, type="struct", fields=[field(f["name"], f["type"]) for f in t["fields"]])
    if kind == "array":
        return schema_dataset.SchemaDatasetFacetFields(
            name=name, type="array", fields=[field("_element", t["elementType"])])
    if kind == "map":
        return schema_dataset.SchemaDatasetFacetFields(
            name=name, type="map", fields=[field("key", t["keyType"]), field("value", t["valueType"])])
    raise ValueError(kind)


inp = json.load(sys.stdin)
CHANGES_URL = inp["changes_url"]
producer = inp["producer"]
facets = {
    "schema": schema_dataset.SchemaDatasetFacet(
        fields=[field(f["name"], f["type"]) for f in inp["schema"]["fields"]], producer=producer),
    "symlinks": symlinks_dataset.SymlinksDatasetFacet(
        identifiers=[symlinks_dataset.Identifier(namespace=inp["catalog_uri"], name=inp["table"], type="TABLE")],
        producer=producer),
    "catalog": catalog_dataset.CatalogDatasetFacet(
        framework="delta", type=inp["catalog_kind"], name=inp["catalog_name"], metadataUri=inp["catalog_uri"],
        source="deltasync", producer=producer),
    "version": dataset_version_dataset.DatasetVersionDatasetFacet(
        datasetVersion=str(inp["version"]), producer=producer),
    "deltasync_changes": DeltasyncChangesDatasetFacet(
        event=inp["kind"], eventId=inp["id"], instance=inp["instance"], changes=inp["changes"],
        reason=inp.get("reason"), logVersion=inp["version"], producer=producer),
}
event = RunEvent(
    eventType=RunState[inp["event_type"]],
    eventTime=inp["time"],
    run=Run(runId=inp["run_id"]),
    job=Job(namespace=inp["job_namespace"], name=inp["job_name"]),
    outputs=[OutputDataset(namespace=inp["ds_namespace"], name=inp["ds_name"], facets=facets)],
    producer=producer,
)
print(Serde.to_json(event))
