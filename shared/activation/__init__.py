"""The audience activation pipeline: the steps of ``statemachine/activation.asl.json``.

``steps`` names the steps and what a task returns; ``pipeline`` runs them; ``users_files`` and
``checks`` are what the steps read, write and check. The services that start an activation
(``shared.audiences.service``) import this package; nothing here imports them.
"""
