-- The customers rows the record model accepted, with its values (a CSV the sync writes), into `fixed`.
CREATE OR REPLACE TABLE fixed AS
SELECT * FROM read_csv(
    $path,
    header = true,
    auto_detect = false,
    columns = {
        'record': 'BIGINT', 'user_id': 'VARCHAR', 'email': 'VARCHAR', 'first_name': 'VARCHAR',
        'last_name': 'VARCHAR', 'phone': 'VARCHAR', 'country': 'VARCHAR', 'limited_data_use': 'BOOLEAN',
        'state': 'VARCHAR', 'marketing_consent': 'BOOLEAN', 'city': 'VARCHAR', 'postcode': 'VARCHAR',
        'date_of_birth': 'VARCHAR', 'gender': 'VARCHAR', 'external_id': 'VARCHAR', 'madid': 'VARCHAR'
    }
)
