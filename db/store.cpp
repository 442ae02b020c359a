// placeholder until the data-access layer lands
