-- Problems found in one file.
SELECT count(*) FROM errors WHERE kind = $kind
