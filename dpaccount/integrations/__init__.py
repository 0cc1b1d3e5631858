"""Drop-in accountants for code written against other libraries.

* ``dpaccount.integrations.dp_accounting.DpaccountAccountant``: a
  ``dp_accounting.PrivacyAccountant`` (jax_privacy, TF Privacy, dp_accounting's
  calibration run on it unchanged);
* ``dpaccount.integrations.opacus.DpaccountAccountant``: an Opacus
  ``IAccountant`` (``PrivacyEngine(accountant="dpaccount")``).

Each module imports its host library; ``import dpaccount`` imports neither.
"""
