# Source: https://github.com/tczhangzhi/torch-text-similarity/issues/1
# Report: ensembling two fine-tuned BERT similarity learners for a competition submission: the first learner fits on a 4 GB GPU, loading the second one runs out of memory
# Shape: TextSimilarityLearner.load_model calls torch.load(path) with no map_location, so every checkpoint of the ensemble is materialised on the GPU it was saved from before load_state_dict copies it
# Expect: TML011 line 40

import pandas as pd
import torch
from torch.utils.data import DataLoader

from torch_text_similarity.model import bert_similarity
from torch_text_similarity.util import get_model_path, sentence_pair_processing


class TextSimilarityLearner():
    def __init__(self, batch_size=10, model_name='web-bert-similarity', loss_func=torch.nn.MSELoss(),
                 learning_rate=5e-5, weight_decay=0, device=torch.device('cpu')):
        self.batch_size = batch_size
        self.loss_func = loss_func
        self.from_pretrain(model_name)
        self.to(device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), weight_decay=weight_decay, lr=learning_rate)

    def load_train_data(self, train_data):
        self.train_data = DataLoader(train_data, batch_size=self.batch_size, shuffle=True, num_workers=2)

    def to(self, device):
        self.device = device
        self.model = self.model.to(device)
        return self

    def from_pretrain(self, model_name):
        self.bert_tokenizer, self.model = bert_similarity(get_model_path(model_name))
        return self

    def save_model(self, path='web-bert-similarity.bin'):
        torch.save(self.model.state_dict(), path)
        return self

    def load_model(self, path='web-bert-similarity.bin'):
        parameters = torch.load(path)  # expect: TML011
        self.model.load_state_dict(parameters)
        return self

    def predict(self, data):
        self.model.eval()
        with torch.no_grad():
            input_ids, token_type_ids, attention_masks, scores = sentence_pair_processing(
                [{'sentence_1': s1, 'sentence_2': s2} for s1, s2 in data], self.bert_tokenizer)
            predictions = torch.empty_like(scores)
            for i in range(0, input_ids.shape[0], self.batch_size):
                out = self.model(input_ids[i:i + self.batch_size].to(self.device),
                                 token_type_ids[i:i + self.batch_size].to(self.device),
                                 attention_masks[i:i + self.batch_size].to(self.device))
                predictions[i:i + self.batch_size] = out.cpu()
        return predictions.view(-1).numpy()


ENSEMBLE = [
    ('web-bert-similarity', './checkpoints/web_fold0.bin', 0.55),
    ('clinical-bert-similarity', './checkpoints/clinical_fold0.bin', 0.45),
]


def make_submission(test_path='./data/test.csv', out_path='./submission.csv'):
    device = torch.device('cuda:0')
    learners = []
    for model_name, ckpt, weight in ENSEMBLE:
        learner = TextSimilarityLearner(model_name=model_name, device=device)
        learner.load_model(ckpt)
        learners.append((learner, weight))

    test_data = pd.read_csv(test_path)
    preds_list = []
    for _, row in test_data.iterrows():
        pair = [(row['text_a'], row['text_b'])]
        preds_list.append(sum(w * lr.predict(pair)[0] for lr, w in learners))

    submission = pd.DataFrame({'id': range(len(preds_list)), 'label': preds_list})
    submission.to_csv(out_path, index=False, header=False)


if __name__ == '__main__':
    make_submission()
