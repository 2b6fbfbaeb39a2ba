-- How many distinct phone numbers are left to the Python normaliser (activation_phone_decided).
SELECT count(*) AS numbers FROM phones_left
