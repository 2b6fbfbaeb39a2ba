-- The engine's guess at a CSV file's dialect: delimiter, quote, escape (first row of sniff_csv).
SELECT Delimiter, Quote, Escape FROM sniff_csv($path, header = true)
