/* One file's problems numbered by the lines its records end on (`line_ends`). */
UPDATE errors SET line = line_ends.line
FROM line_ends
WHERE
  errors.kind = :kind AND errors.record = line_ends.record
