# Modelled on: https://github.com/OpenNMT/OpenNMT-py/issues/1141
# Report: torch.no_grad() was not used in Trainer.validate(); forgotten during the 0.4 -> 1.0 migration.
class Trainer:
    def __init__(self, model, train_loss, valid_loss):
        self.model = model
        self.train_loss = train_loss
        self.valid_loss = valid_loss

    def validate(self, valid_iter):
        self.model.eval()
        stats = []
        for batch in valid_iter:
            src, tgt = batch.src, batch.tgt
            outputs, attns = self.model(src, tgt)  # expect: TML003
            batch_stats = self.valid_loss.monolithic_compute_loss(batch, outputs, attns)
            stats.append(batch_stats)
        self.model.train()
        return stats
