# SPDX-License-Identifier: GPL-2.0
"""satnet testbed: the seeds' satellite dumbbell in network namespaces."""
