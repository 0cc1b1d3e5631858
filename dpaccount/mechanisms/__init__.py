"""The mechanism zoo: ``Mechanism`` subclasses with their pairs and RDP.

The public names are exported by ``dpaccount`` itself.
"""
