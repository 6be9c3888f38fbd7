# Source: https://github.com/sktime/pytorch-forecasting/issues/322
# Report: pytorch-forecasting's predict() kept every batch's output on the GPU and concatenated them at the end, so a large validation set ran the GPU out of memory; the reporter's fix was `out[k] = out[k].cpu().detach()` for every key before keeping the batch.
# Shape: the same predict loop, but each output dict (and the input dict when return_x is set) is moved to the CPU and detached before it is appended, so the GPU holds only the current batch.
# Expect: near-miss: must be silent
import torch


def _concatenate_output(outputs):
    return {key: torch.cat([out[key] for out in outputs], dim=0) for key in outputs[0]}


def _to_cpu(tensors):
    return {name: value.cpu().detach() for name, value in tensors.items()}


class ForecastingModelMixin:
    def _move_batch(self, x):
        return {name: value.to(self.device) for name, value in x.items()}

    def predict(self, dataloader, mode="prediction", return_x=False):
        self.eval()
        output, x_list = [], []
        with torch.no_grad():
            for x, _ in dataloader:
                x = self._move_batch(x)
                out = self(x)  # raw output is a dictionary of tensors
                out["prediction"] = self.transform_output(out)
                if mode == "prediction":
                    out = {"prediction": self.loss.to_prediction(out["prediction"])}
                elif mode == "quantiles":
                    out = {"prediction": self.loss.to_quantiles(out["prediction"])}

                for k in out:
                    out[k] = out[k].cpu().detach()
                output.append(out)
                if return_x:
                    x_list.append(_to_cpu(x))

        output = _concatenate_output(output)
        if return_x:
            return output, _concatenate_output(x_list)
        return output
