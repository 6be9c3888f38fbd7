# Source: https://github.com/nitrain/nitrain/issues/27
# Report: the suggested fix moves each prediction to the CPU before concatenating (here also under no_grad).
# Shape: same module trainer; predict_loader runs under torch.no_grad() and keeps CPU copies of the outputs.
# Expect: near-miss: must be silent
import torch


class ModuleTrainer:
    def __init__(self, model, cuda_device=0):
        self.model = model.cuda(cuda_device)
        self.cuda_device = cuda_device

    def predict_loader(self, loader):
        self.model.eval()
        prediction_list = []
        with torch.no_grad():
            for inputs, _ in loader:
                inputs = inputs.cuda(self.cuda_device)
                prediction_list.append(self.model(inputs).cpu())
        return torch.cat(prediction_list, 0)

    def evaluate_loader(self, loader, metric):
        predictions = self.predict_loader(loader)
        targets = torch.cat([target for _, target in loader])
        return metric(predictions, targets)
