"""The FFE family (spec ffe-rating-rules.md): the classic national rating (`rules`, Part A), the
rapid rating (`rapid`, Part G.1), the age categories (`ages`) and the driver over the store (`run`)."""
