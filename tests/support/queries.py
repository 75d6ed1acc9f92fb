"""Flink SQL texts that more than one test reads: queries of every clause the reader supports (on the tables of
TYPES), and a plain LEFT join of two Kafka tables."""

from __future__ import annotations

TYPES = """CREATE TABLE a (k INT, n BIGINT, d DECIMAL(10, 2), x DOUBLE, ts TIMESTAMP(3), day DATE, s STRING)
  WITH ('connector' = 'kafka', 'format' = 'json');
CREATE TABLE b (k INT, m INT, d DECIMAL(5, 1), PRIMARY KEY (k) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'key.format' = 'json', 'value.format' = 'json');
CREATE TABLE c (k INT, v STRING) WITH ('connector' = 'kafka', 'format' = 'debezium-json');
CREATE TABLE e (w BIGINT) WITH ('connector' = 'kafka', 'format' = 'json');
"""


QUERIES = {
    "semi_anti_filter": TYPES + """SELECT a.k, a.d, a.s FROM a JOIN b ON a.k = b.k AND a.d >= b.d
        WHERE a.x > 0.5 AND EXISTS (SELECT 1 FROM c WHERE c.k = a.k) AND a.s <> 'b'""",
    "not_exists_in": TYPES + """SELECT a.* FROM a JOIN b ON a.k = b.k
        WHERE NOT EXISTS (SELECT 1 FROM c WHERE c.k = a.k AND c.v = a.s) AND a.n IN (SELECT w FROM e)""",
    "null_safe_full": TYPES + """SELECT a.k AS ak, c.k AS ck, c.v FROM a
        FULL JOIN c ON a.k IS NOT DISTINCT FROM c.k AND a.s = c.v""",
    "right_literals": TYPES + """SELECT b.k, a.ts, a.day FROM a RIGHT JOIN b ON a.k = b.k
        AND a.ts > TIMESTAMP '1970-01-01 00:00:00.001' AND a.day >= DATE '1970-01-02' AND a.d BETWEEN 0.01 AND 0.02
        AND a.n % 2 = 0 AND a.x <> a.d""",
    "three_way_between": TYPES + """SELECT * FROM a LEFT JOIN b ON a.k = b.k
        LEFT JOIN c ON c.k = b.k WHERE b.m BETWEEN 1 AND 2 OR b.m IS NULL""",
    "arithmetic_parens": TYPES + """SELECT a.k, `b`.m AS bm, c.v FROM a INNER JOIN b ON a.k = b.k
        AND (a.n = b.m OR a.k = -b.m) AND a.n - 1 < b.m * 2 AND a.k / 2 <= b.m AND a.s IS DISTINCT FROM 'a'
        LEFT OUTER JOIN c ON c.k = a.k AND TRUE""",
    "time_fields_not_in": TYPES + """SELECT a.k, b.m FROM a JOIN b ON a.k = b.k AND QUARTER(a.ts) = b.m
        AND YEAR(a.ts) >= 1970 AND MONTH(a.ts) <= 12 AND DAYOFMONTH(a.ts) >= 1 AND HOUR(a.ts) < 24
        AND MINUTE(a.ts) < 60 AND SECOND(a.ts) >= 0 AND EXTRACT(DAY FROM a.day) >= 1
        WHERE (a.k, a.s) NOT IN (SELECT c.k, c.v FROM c)""",
}

PLAIN_LEFT_JOIN = """
CREATE TABLE customers (id BIGINT, tier STRING) WITH ('connector' = 'kafka', 'format' = 'json');
CREATE TABLE visits (customer BIGINT, page STRING) WITH ('connector' = 'kafka', 'format' = 'json');
SELECT c.id, c.tier, v.customer, v.page FROM customers AS c LEFT JOIN visits AS v ON c.id = v.customer;
"""
