"""`servecap capacity`: search the SLO boundary, verify the users it implies, answer first."""
