"""Schema versions: a v1 file written by a frozen copy of the v1 DDL, upgraded by a code path
with a v2 migration; a newer file refused; a failed migration rolled back."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from harness.store import SCHEMA_VERSION, SchemaTooNew, Store, mode_summary_df, results_df
from harness.store import _schema as store_schema
from harness.store._schema import MIGRATIONS, schema_version
from harness.store._views import VIEWS

# The v1 schema exactly as it shipped. Never edit: files in the wild look like this.
FROZEN_V1 = """
CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP NOT NULL,
                             harness_version VARCHAR);
CREATE SEQUENCE results_seq START 1;
CREATE TABLE bench_runs (
    run_id VARCHAR PRIMARY KEY, started_at TIMESTAMP NOT NULL, finished_at TIMESTAMP,
    status VARCHAR NOT NULL DEFAULT 'running'
        CHECK (status IN ('running', 'finished', 'interrupted', 'failed')),
    label VARCHAR, git_sha VARCHAR, harness_version VARCHAR, suites VARCHAR[], modes VARCHAR[],
    providers VARCHAR[], epochs INTEGER, config JSON, pid INTEGER, host VARCHAR, error VARCHAR,
    resumed INTEGER NOT NULL DEFAULT 0);
CREATE TABLE results (
    result_id BIGINT NOT NULL DEFAULT nextval('results_seq'), run_id VARCHAR NOT NULL,
    cell_key VARCHAR NOT NULL, suite VARCHAR NOT NULL, task_id VARCHAR NOT NULL,
    mode VARCHAR NOT NULL, provider VARCHAR NOT NULL, model VARCHAR, epoch INTEGER NOT NULL,
    passed BOOLEAN NOT NULL, score DOUBLE, grader_explanation VARCHAR, finish_reason VARCHAR,
    category VARCHAR, halted_reason VARCHAR, error VARCHAR, iterations INTEGER,
    tool_calls INTEGER, llm_calls INTEGER, input_tokens BIGINT, output_tokens BIGINT,
    reasoning_tokens BIGINT, cache_read_tokens BIGINT, cache_write_tokens BIGINT,
    cost_usd DOUBLE, duration_ms DOUBLE, trace_id VARCHAR, cassette VARCHAR, deliverable JSON,
    text VARCHAR, error_diagnostic JSON, no_progress_snapshot JSON, calls JSON,
    finished_at TIMESTAMP NOT NULL);
CREATE TABLE spans (
    run_id VARCHAR NOT NULL, trace_id VARCHAR NOT NULL, span_id VARCHAR NOT NULL,
    parent_span_id VARCHAR, name VARCHAR NOT NULL, kind VARCHAR, start_time TIMESTAMP_NS,
    end_time TIMESTAMP_NS, duration_ms DOUBLE, status_code VARCHAR, status_message VARCHAR,
    attributes JSON, events JSON);
INSERT INTO schema_version VALUES (1, TIMESTAMP '2026-11-01 00:00:00', '0.1.0');
INSERT INTO bench_runs (run_id, started_at, status, label)
    VALUES ('old', TIMESTAMP '2026-11-01 00:00:00', 'finished', 'v1');
INSERT INTO results (run_id, cell_key, suite, task_id, mode, provider, epoch, passed, cost_usd,
                     finish_reason, finished_at)
    VALUES ('old', 's/t/react/mock/e0', 's', 't', 'react', 'mock', 0, true, 0.5, 'stop',
            TIMESTAMP '2026-11-01 00:01:00');
"""


def v1_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path))
    con.execute(FROZEN_V1)
    con.close()
    return path


def columns(path: Path) -> list[tuple[str, str, str]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'main' AND table_name NOT LIKE 'v\\_%' ESCAPE '\\' "
            "ORDER BY table_name, ordinal_position"
        ).fetchall()
    finally:
        con.close()


def _later(con: duckdb.DuckDBPyConnection) -> None:
    """A later migration adding a results column (to the compacted table, since v5)."""
    con.execute("ALTER TABLE results_compacted ADD COLUMN tags VARCHAR[]")
    con.execute("UPDATE results_compacted SET tags = ['legacy']")


LATER = (*MIGRATIONS, _later)


def test_a_v1_file_upgrades_to_the_shipped_schema(tmp_path: Path) -> None:
    """A file written by the v1 DDL of the first release is migrated to v2 (results.status,
    backfilled from passed/error), v3 (results.transcript), v4 (results.grading_cost_usd, NULL:
    not known) and v5 (the tables become results_compacted and spans_compacted under the views),
    v6 (results.drift, NULL: not known), v7 (results.turns, NULL: not stored), and then matches a
    fresh file column for column."""
    assert SCHEMA_VERSION == 7
    old = v1_file(tmp_path / "old.duckdb")
    fresh = tmp_path / "fresh.duckdb"
    Store.open(fresh).close()
    with Store.open(old) as store:
        assert schema_version(store.con) == 7
        df = results_df(store, "old", with_transcript=True)
        assert df["transcript"].isna().all()  # older rows: no transcript stored
        assert df["cost_usd"].tolist() == [0.5]
        assert df["status"].tolist() == ["passed"]
        assert df["grading_cost_usd"].isna().tolist() == [True]
        assert df["drift"].isna().tolist() == [True]
        assert df["turns"].isna().tolist() == [True]
        assert mode_summary_df(store, "old")["pass_rate"].tolist() == [1.0]  # views created
    assert columns(old) == columns(fresh)


def test_a_v1_file_is_upgraded_by_a_later_migration(tmp_path: Path) -> None:
    path = v1_file(tmp_path / "h.duckdb")
    with Store.open(path, migrations=LATER) as store:
        assert schema_version(store.con) == 8
        df = results_df(store, "old")
        assert list(df["tags"][0]) == ["legacy"]  # the v2 column, filled by the migration
        assert df["cost_usd"].tolist() == [0.5]  # v1 data kept
        run = store.begin_run()
        store.write_result(
            {"run_id": run, "suite": "s", "task_id": "t", "mode": "react", "provider": "mock",
             "epoch": 0, "passed": True}
        )  # fmt: skip
        assert store.con.execute("SELECT count(*) FROM v_cells").fetchone() == (2,)
        versions = store.con.execute("SELECT version FROM schema_version ORDER BY 1").fetchall()
        assert versions == [(1,), (2,), (3,), (4,), (5,), (6,), (7,), (8,)]


def test_a_read_only_open_upgrades_an_older_file_first(tmp_path: Path) -> None:
    path = v1_file(tmp_path / "h.duckdb")
    with Store.open(path, read_only=True, migrations=LATER) as ro:
        assert ro.read_only
        assert schema_version(ro.con) == 8


def test_a_newer_file_is_refused_naming_both_versions(tmp_path: Path) -> None:
    path = v1_file(tmp_path / "h.duckdb")
    Store.open(path, migrations=LATER).close()
    for read_only in (False, True):
        with pytest.raises(SchemaTooNew, match=r"schema v8, but this harness .* up to v7"):
            Store.open(path, read_only=read_only)
    assert schema_version(duckdb.connect(str(path), read_only=True)) == 8  # left untouched


def test_a_failed_migration_is_rolled_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = v1_file(tmp_path / "h.duckdb")

    def broken(con: duckdb.DuckDBPyConnection) -> None:
        con.execute("ALTER TABLE results_compacted ADD COLUMN half_done INTEGER")
        raise RuntimeError("migration bug")

    monkeypatch.setattr(store_schema, "MIGRATIONS", (*MIGRATIONS, broken))
    with pytest.raises(RuntimeError, match="migration bug"):
        Store.open(path)  # the default list is read at call time
    assert ("results_compacted", "half_done", "INTEGER") not in columns(path)
    monkeypatch.undo()
    with Store.open(path) as store:  # and the file still opens with the shipped code
        assert schema_version(store.con) == SCHEMA_VERSION


def test_an_empty_file_is_created_at_the_current_version(db_path: Path) -> None:
    with Store.open(db_path) as store:
        assert schema_version(store.con) == SCHEMA_VERSION
        views = {
            r[0]
            for r in store.con.execute(
                "SELECT view_name FROM duckdb_views() WHERE NOT internal"
            ).fetchall()
        }
        assert views == set(VIEWS)
