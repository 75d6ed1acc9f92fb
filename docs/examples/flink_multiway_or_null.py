"""Finding 6 with plain PyFlink: a 3-way LEFT chain under the multi-way operator, no converge, no case ids."""
import sys

from pyflink.common import Row, RowKind
from pyflink.common.typeinfo import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.table import DataTypes, Schema, StreamTableEnvironment
from pyflink.table.changelog_mode import ChangelogMode

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
t_env = StreamTableEnvironment.create(env)
t_env.get_config().set("table.optimizer.multi-join.enabled", sys.argv[1])
row_type = Types.ROW_NAMED(["k", "id", "v", "s"], [Types.LONG(), Types.LONG(), Types.LONG(), Types.STRING()])


def view(name, rows, key):
    stream = env.from_collection(rows, type_info=row_type)
    schema = Schema.new_builder().column("k", DataTypes.BIGINT().not_null()).column("id", DataTypes.BIGINT()) \
        .column("v", DataTypes.BIGINT()).column("s", DataTypes.STRING())
    if key:
        schema = schema.primary_key("k")
    mode = ChangelogMode.upsert() if key else ChangelogMode.all()
    t_env.create_temporary_view(name, t_env.from_changelog_stream(stream, schema.build(), mode))


def insert(*values):
    r = Row(*values)
    r.set_row_kind(RowKind.INSERT)
    return r


view("a", [insert(1, None, None, "a")], True)
view("b", [insert(99, 99, 99, "z")], False)  # a row of another key: b holds nothing of key 1
view("c", [insert(1, 3, 0, "a")], True)
result = t_env.execute_sql("""
SELECT a.k, a.id, a.v, a.s, b.k, c.k, c.id, c.v, c.s
FROM a LEFT JOIN b ON a.k = b.k AND (a.id = b.id OR a.v = b.v)
       LEFT JOIN c ON a.k = c.k AND (a.v = c.v OR a.s = c.s)""")
final = {}
with result.collect() as rows:
    for row in rows:
        values = tuple(row)
        final[values] = final.get(values, 0) + (1 if row.get_row_kind() in (RowKind.INSERT, RowKind.UPDATE_AFTER) else -1)
print("multi-join", sys.argv[1], sorted((k, n) for k, n in final.items() if n), flush=True)
