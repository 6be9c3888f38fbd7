# Source: https://github.com/nitrain/nitrain/issues/27
# Report: long runs ran out of GPU memory; predict_loader collected every batch's prediction on the GPU before concatenating, and the suggested fix moved predictions to the CPU before torch.cat.
# Shape: a module trainer's predict_loader calls the model on each CUDA batch without no_grad and keeps the outputs, graph and all (so TML001 rather than TML004 is the primary code, as for other graph-carrying values kept in lists here), in a list concatenated after the loop.
# Expect: TML001 line 18; TML003 line 18
import torch


class ModuleTrainer:
    def __init__(self, model, cuda_device=0):
        self.model = model.cuda(cuda_device)
        self.cuda_device = cuda_device

    def predict_loader(self, loader):
        self.model.eval()
        prediction_list = []
        for inputs, _ in loader:
            inputs = inputs.cuda(self.cuda_device)
            prediction_list.append(self.model(inputs))  # expect: TML001, TML003
        return torch.cat(prediction_list, 0)

    def evaluate_loader(self, loader, metric):
        predictions = self.predict_loader(loader)
        targets = torch.cat([target for _, target in loader]).cuda(self.cuda_device)
        return metric(predictions, targets)
