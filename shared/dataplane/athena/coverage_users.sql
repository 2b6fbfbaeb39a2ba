/* The sync's good customers (`customers`) as the users the activation's normalisation reads */
/* (users_input, in the shape activation_load_users gives a file), numbered by user_id: every match key */
/* as text, NULL for one not given. The coverage per match key and the identifier flags of */
/* identifiers.npz are what that normalisation decides (shared.datasources.sync.write_coverage). */
CREATE OR REPLACE TABLE users_input AS
SELECT
  ROW_NUMBER() OVER (ORDER BY user_id) AS pos,
  user_id,
  email,
  phone,
  first_name,
  last_name,
  country,
  CAST(NULL AS VARCHAR) AS limited_data_use,
  state,
  CAST(NULL AS VARCHAR) AS value,
  CAST(NULL AS VARCHAR) AS score,
  city,
  postcode,
  CAST(date_of_birth AS VARCHAR) AS date_of_birth,
  gender,
  external_id,
  madid
FROM customers
