/* The good customers of `checked`, and those the record model accepted (`fixed`), into `customers`. */
CREATE OR REPLACE TABLE customers AS
SELECT
  record,
  user_id,
  email,
  first_name,
  last_name,
  phone,
  country,
  limited_data_use,
  state,
  marketing_consent,
  city,
  postcode,
  date_of_birth,
  gender,
  external_id,
  madid
FROM checked
WHERE
  verdict = 'good'
UNION ALL
SELECT
  *
FROM fixed
