# Source: https://github.com/clinfo/DeepIOStability/blob/fd0c84ca04094ef0d6a0cd224c8299c8a22c8243/dios/model.py
# Report: audit of a state-space-model trainer whose LossLogger.update() first summed the live loss and loss-term dict; the repo later fixed update() to accumulate `.detach().to("cpu")` copies, which is what this version keeps (validation additionally under no_grad)
# Shape: same trainer and LossLogger, but update() keeps `loss.detach().to("cpu")` and detached dict terms (the repo's fix), and the validation loop runs under torch.no_grad()
# Expect: near-miss: must be silent
import torch
import torch.optim as optim
from torch.utils.data import DataLoader


class LossLogger:
    def __init__(self):
        self.loss_history = []

    def start_epoch(self):
        self.running_loss = 0
        self.running_terms = {}
        self.count = 0

    def update(self, loss, loss_dict):
        self.running_loss += loss.detach().to("cpu")
        self.count += 1
        for name, value in loss_dict.items():
            self.running_terms[name] = self.running_terms.get(name, 0) + value.detach().to("cpu")

    def end_epoch(self):
        self.loss_history.append(float(self.running_loss) / self.count)
        return self.loss_history[-1]

    def message(self, prefix):
        terms = "  ".join(f"{prefix}-{k.lstrip('*')}: {float(v) / self.count:.3f}" for k, v in self.running_terms.items())
        return f"{prefix}-loss: {self.loss_history[-1]:.3f}  {terms}"


class StateSpaceTrainer:
    def __init__(self, config, system_model, device="cuda"):
        self.config = config
        self.system_model = system_model.to(device)
        self.device = device

    def _unpack(self, batch):
        return [t.to(self.device) for t in batch]

    @staticmethod
    def _total(loss_dict):
        return sum(v for k, v in loss_dict.items() if not k.startswith("*"))

    def _compute_batch_loss(self, batch):
        loss_dict = self.system_model(*self._unpack(batch))
        return self._total(loss_dict), loss_dict

    def fit(self, train_set, valid_set):
        cfg = self.config
        train_loader = DataLoader(train_set, batch_size=cfg["batch_size"], shuffle=True, num_workers=2)
        valid_loader = DataLoader(valid_set, batch_size=cfg["batch_size"], num_workers=2)
        optimizer = optim.Adam(self.system_model.parameters(), lr=cfg["learning_rate"], weight_decay=0.3)
        train_logger, valid_logger = LossLogger(), LossLogger()
        best, patience = None, 0
        for epoch in range(cfg["epoch"]):
            train_logger.start_epoch()
            valid_logger.start_epoch()
            for batch in train_loader:
                optimizer.zero_grad()
                loss, loss_dict = self._compute_batch_loss(batch)
                train_logger.update(loss, loss_dict)
                loss.backward()
                optimizer.step()
            with torch.no_grad():
                for batch in valid_loader:
                    loss_dict = self.system_model(*self._unpack(batch))
                    valid_logger.update(self._total(loss_dict), loss_dict)
            train_logger.end_epoch()
            val = valid_logger.end_epoch()
            if best is None or val < best:
                best, patience = val, 0
                torch.save(self.system_model.state_dict(), f"{cfg['save_model_path']}/best.checkpoint")
            else:
                patience += 1
            print(f"[{epoch + 1:4d}]", train_logger.message("train"), valid_logger.message("valid"), f"({patience:2d})")
        return train_logger, valid_logger
