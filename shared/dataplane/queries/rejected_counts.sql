-- Per file kind: problems, and distinct rejected rows.
SELECT kind, count(*) AS problems, count(DISTINCT record) AS rows_rejected FROM errors GROUP BY kind
