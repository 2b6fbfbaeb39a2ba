"""KMS envelope encryption: a fresh KMS data key per secret, AES-256-GCM from ``cryptography``.

The encryption context (organization and connection) is bound twice: KMS refuses to decrypt the
data key under any other context, and AES-GCM authenticates it as associated data, so a ciphertext
copied onto another organization's record cannot be decrypted there.
"""

from __future__ import annotations

import base64
import json
import os
from typing import TYPE_CHECKING

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from shared.records.connections import EncryptedSecret

if TYPE_CHECKING:
    from mypy_boto3_kms import KMSClient

NONCE_BYTES = 12


def _aad(context: dict[str, str]) -> bytes:
    return json.dumps(context, sort_keys=True, separators=(",", ":")).encode()


class EnvelopeCipher:
    """Encrypts and decrypts small secrets (platform tokens) under one KMS key."""

    def __init__(self, kms: KMSClient, key_id: str) -> None:
        self._kms = kms
        self._key_id = key_id

    def encrypt(self, plaintext: str, context: dict[str, str]) -> EncryptedSecret:
        """Encrypt ``plaintext`` under a new data key bound to ``context``."""
        data_key = self._kms.generate_data_key(
            KeyId=self._key_id, KeySpec="AES_256", EncryptionContext=context
        )
        nonce = os.urandom(NONCE_BYTES)
        ciphertext = AESGCM(data_key["Plaintext"]).encrypt(nonce, plaintext.encode(), _aad(context))
        return EncryptedSecret(
            ciphertext=base64.b64encode(ciphertext).decode(),
            encrypted_key=base64.b64encode(data_key["CiphertextBlob"]).decode(),
            nonce=base64.b64encode(nonce).decode(),
        )

    def decrypt(self, secret: EncryptedSecret, context: dict[str, str]) -> str:
        """The plaintext; raises if the context differs from the one used to encrypt."""
        data_key = self._kms.decrypt(
            CiphertextBlob=base64.b64decode(secret.encrypted_key), EncryptionContext=context
        )["Plaintext"]
        plaintext = AESGCM(data_key).decrypt(
            base64.b64decode(secret.nonce), base64.b64decode(secret.ciphertext), _aad(context)
        )
        return plaintext.decode()
