-- Two clauses converge does not map (a function in the SELECT list, a GROUP BY): both are refused in one run.
CREATE TABLE orders (order_id BIGINT, amount DECIMAL(10, 2)) WITH ('connector' = 'kafka', 'format' = 'json');
CREATE TABLE payments (order_id BIGINT, paid DECIMAL(10, 2)) WITH ('connector' = 'kafka', 'format' = 'json');

SELECT o.order_id, SUM(p.paid) AS paid
FROM orders o
JOIN payments p ON p.order_id = o.order_id
GROUP BY o.order_id;
