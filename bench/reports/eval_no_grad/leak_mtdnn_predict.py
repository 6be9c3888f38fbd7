# Source: https://github.com/namisan/mt-dnn/pull/92
# Report: MT-DNN dev/test prediction ran with autograd on; wrapping eval_model() in torch.no_grad() reduced memory use and sped up inference
# Shape: MTDNNModel.predict() sets eval mode and calls the network per batch; eval_model() loops over the data; the script calls it with no grad-disabled context
# Expect: TML003 line 24
import numpy as np
import torch
import torch.nn.functional as F


class MTDNNModel:
    def __init__(self, network, config):
        self.network = network
        self.mnetwork = network
        self.config = config

    def predict(self, batch_meta, batch_data):
        self.network.eval()
        task_id = batch_meta["task_id"]
        inputs = batch_data[:batch_meta["input_len"]]
        if len(inputs) == 3:
            inputs.append(None)
            inputs.append(None)
        inputs.append(task_id)
        score = self.mnetwork(*inputs)  # expect: TML003
        if batch_meta["task_type"] == "classification":
            score = F.softmax(score, dim=1)
        score = score.data.cpu().numpy()
        predict = np.argmax(score, axis=1).tolist()
        return score.reshape(-1).tolist(), predict, batch_meta["label"]


def eval_model(model, data, metric_meta, use_cuda=True, with_label=True):
    predictions, golds, scores, ids = [], [], [], []
    for batch_meta, batch_data in data:
        score, pred, gold = model.predict(batch_meta, batch_data)
        predictions.extend(pred)
        golds.extend(gold)
        scores.extend(score)
        ids.extend(batch_meta["uids"])
    metrics = {m.__name__: m(predictions, golds) for m in metric_meta} if with_label else {}
    return metrics, predictions, scores, golds, ids


def main(network, state_dict, test_data, metric_meta, args):
    config = state_dict["config"]
    config["cuda"] = args.cuda
    model = MTDNNModel(network, config)
    test_metrics, test_predictions, scores, golds, test_ids = eval_model(
        model, test_data, metric_meta=metric_meta, use_cuda=args.cuda, with_label=args.with_label)
    return {"metrics": test_metrics, "predictions": test_predictions, "uids": test_ids, "scores": scores}
